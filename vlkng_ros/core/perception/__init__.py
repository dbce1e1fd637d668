"""perception"""
