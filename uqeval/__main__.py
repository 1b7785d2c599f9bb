try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C (SIGINT) while the command line is still being imported: no traceback
    raise SystemExit(130) from None

if __name__ == "__main__":
    main()
