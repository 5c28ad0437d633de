"""The student: a network taught by the search (issue 61). ``labels`` makes its data:
search-labelled positions with values, standard errors and the particle filter's belief."""
