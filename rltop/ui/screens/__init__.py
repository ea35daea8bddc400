"""The app's screens: dashboard (default), detail (Enter on a metric), runs list, help."""
