"""clouds"""
