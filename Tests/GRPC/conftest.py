"""Fixtures the suites share: one emulator per test module, with Google's clients pointed at it."""

import tempfile

import pytest

from test_google_client import Emulator


@pytest.fixture(scope="module")
def emulator():
    with tempfile.TemporaryDirectory() as directory:
        instance = Emulator(directory)
        try:
            yield instance
        finally:
            instance.stop()
