"""Metric diagnostics of Kauf & Ivanova (2023), Sections 4-5, as DataFrames."""
