"""`python -m tracelab` runs the CLI."""
from tracelab.cli import main

main()
