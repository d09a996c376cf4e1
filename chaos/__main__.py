from chaos.cli import main

main()
