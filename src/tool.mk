# cumemguard-report: written by the report-tool work.
