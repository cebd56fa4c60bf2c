"""The desk's pages, a router each: what a page shows, and the acts its forms send (``ops.acts``)."""
