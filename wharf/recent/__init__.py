"""Recent: the files a user opened lately.
"""
