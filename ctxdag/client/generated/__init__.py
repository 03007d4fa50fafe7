"""Written by ariadne-codegen (`make client`); never edited by hand. aio/ and sync/ are the
same operations (../operations) as an async and a sync client."""
