try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C (SIGINT) while the command line is still being imported: no traceback
    import os
    import sys

    sys.stderr.write("interrupted\n")
    sys.stderr.flush()
    os._exit(130)  # as uqeval.cli.interrupts.exit_now: finalizing after an interrupted import went wrong

if __name__ == "__main__":
    main()
