"""The answer reader's training data (examples.py, errors.py) and its training (train.py); the reader itself is
models/verify/reader.py."""
