from chaos.cli.app import main

main()
