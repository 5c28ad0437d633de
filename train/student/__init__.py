"""The student: a network taught by the search (issue 61). ``labels`` makes its data:
search-labelled positions with values, standard errors and the particle filter's belief;
``fit`` trains the network on them (soft targets from the values, the value head in the
search's unit / 1,000) and writes the file ``agents.student`` plays."""
