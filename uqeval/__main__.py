try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C (SIGINT) while the command line is still being imported: no traceback
    import sys

    sys.stderr.write("interrupted\n")
    raise SystemExit(130) from None

if __name__ == "__main__":
    main()
