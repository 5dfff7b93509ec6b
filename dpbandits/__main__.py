import sys

from dpbandits.cli import console_main

sys.exit(console_main())
