// Package archive owns the foya.session format: writing a session's events
// and blobs as one document, and parsing it (whole or streamed, with limits)
// with every line validated, including the paths of recorded file changes.
// What an import does with a parsed archive is the engine's.
//
// It imports only the standard library and core.
package archive
