"""Cross-checks of tenant files against each other and the stack, each naming the file and field."""
