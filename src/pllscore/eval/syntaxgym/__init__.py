"""SyntaxGym test suites: read and checked, scored by any model, their predictions evaluated."""
