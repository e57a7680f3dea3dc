"""Built-in data sets: the seeded toy genome that lets every stage run anywhere in minutes."""
