# The html command's pages, opened in Debian's chromium (headless) through
# the DevTools protocol by puppeteer-core, which scripts/install-deps.sh
# installs from tests/html/package-lock.json.
SYSTEM_TESTS += tests/html/t-html.sh
EXTRA_DIST += tests/html/t-html.sh tests/html/page-test.js \
	tests/html/package.json tests/html/package-lock.json
clean-local: clean-html-shots
clean-html-shots:
	rm -rf tests/html/screenshots
.PHONY: clean-html-shots
