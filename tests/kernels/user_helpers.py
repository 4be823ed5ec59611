"""A helper module of a user's kernel file (tests/kernels/user_helper_kernel.py): a guard here is the user's
own code's, SC001 at this line, not a guard of torch's helper (SC022)."""


def checked_len(n):
    if n > 8:  # the user's own guard, in a module of the user's
        return n
    return n
