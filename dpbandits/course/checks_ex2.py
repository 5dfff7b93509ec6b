"""placeholder"""
from dpbandits.course.registry import Exercise
EXERCISE = Exercise(2, "x2", "todo", 1, "", ())
