"""The interactive doctor (Textual). Nothing outside this package imports it, except the CLI, lazily."""
