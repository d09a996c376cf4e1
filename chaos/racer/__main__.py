"""``python -m chaos.racer SPEC.json``: run one racer (see ``chaos.racer.main``)."""

import sys

from chaos.racer.main import main

sys.exit(main())
