import sys

from dpbandits.cli import main

sys.exit(main())
