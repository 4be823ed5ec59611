"""One kernel run on one case under symbolic sizes -> ``Trace``; the arguments it is called with."""
