"""`python -m ganeval`: the `ganeval` command (see `ganeval.app.main`)."""

from ganeval.app.main import main

if __name__ == "__main__":
    main()
