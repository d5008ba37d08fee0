"""Movement ops as index math: View and ShapeTracker."""
from lazynb.shape.view import View  # noqa: F401
from lazynb.shape.shapetracker import ShapeTracker  # noqa: F401
