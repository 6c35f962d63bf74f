"""Runtime code a generated package carries verbatim (the files here are copied into OUT with a version header):
`_runtime.py`, the Python side of the C ABI. What varies per crate is rendered beside it (`templates/python/_crate.py.j2`)."""
