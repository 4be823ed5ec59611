"""A kernel (for the new_empty example contract) whose guard lies in a helper module of the user's own."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from user_helpers import checked_len  # noqa: E402 - the helper module beside this file


def kernel(self, size):
    return self.new_empty([checked_len(size[0])])
