// Package layout holds a test of the repository's package layering: the
// README's "How it is built" table lists every package, and each package
// imports only packages listed after it.
package layout
