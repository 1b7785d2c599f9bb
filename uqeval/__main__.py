try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C (SIGINT) while the command line is still being imported: no traceback
    import signal
    import sys

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # settled: as uqeval.cli.interrupts.settle
    exec("")  # clears CPython's mark of an interrupt raised in exec() (dataclasses): exit 130, not -2
    sys.stderr.write("interrupted\n")
    raise SystemExit(130) from None

if __name__ == "__main__":
    main()
