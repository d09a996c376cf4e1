"""``python -m chaos.forkserver``: kept for scripts that start a fork server by its old name.

The fork server lives in ``chaos.racer.forkserver`` (the racer side); this module only forwards.
"""

import sys

if __name__ == "__main__":
    from chaos.racer.forkserver import main

    sys.exit(main())
