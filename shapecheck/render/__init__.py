"""Every output format of every command: text, JSON, GitHub, SARIF, JUnit."""
