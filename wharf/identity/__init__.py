"""Identity: users, login sessions, API tokens and the login/registration throttle.
"""
