"""``python -m services.cli``: how ``vaeo up`` starts each process."""

import sys

from services.cli import main

sys.exit(main())
