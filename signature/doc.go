// Package signature turns the frames of a parsed crash into a stable,
// short, explainable crash key.
package signature
