"""What every layer of the engine may use, and which imports nothing of the engine itself:
block sizes (``blocks``) and the autograd test that decides whether work may be done in
place (``grad``)."""
