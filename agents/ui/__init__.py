"""Where people play: the terminal game (play, human) and the browser table (web).
"""
