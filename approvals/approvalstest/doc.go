// Package approvalstest drives the approvals service as an approver's browser would, over HTTP:
// it signs in through the dev identity provider's persona picker (the real authorization code
// flow with PKCE), reads a request's page and posts its form with the page's CSRF token. Tests
// and the dev stack's tour use it where a person would click; it is no substitute for the
// browser test, which drives a real browser.
package approvalstest
