"""Plain-torch networks shared by the RLModules (no Ray): blocks, LSTM, masked MLP,
transformer, streaming encoder, opponent-history windows.
"""
