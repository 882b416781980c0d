"""Host tools for the smart dealing shoe: the `shoectl` command and the libraries behind it."""
