import os
import sys

from harness.cli import main
from harness.execution import settle_between_tasks

settle_between_tasks()

try:
    status = main()
    sys.stdout.flush()
except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as cat would
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    status = 1
sys.exit(status)
