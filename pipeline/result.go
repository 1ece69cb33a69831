package pipeline

import (
	"encoding/json"
	"io"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// SchemaVersion is the version of the JSON objects Result and Bucket
// encode to (their schema_version key), described by result.schema.json
// beside this file. Keys are only ever added within a version; a rename
// or removal bumps it.
const SchemaVersion = 1

// Version is the version of the crashsig library.
const Version = "0.9.0"

// VersionSource says where a Result's version came from.
type VersionSource string

// Where a version came from.
const (
	// VersionNone: no version is known.
	VersionNone VersionSource = ""
	// VersionFromCrash: the incident printed it (dump preamble, hs_err header).
	VersionFromCrash VersionSource = "crash"
	// VersionFromBanner: the startup banner earlier in the same input
	// (same process lifetime) printed it.
	VersionFromBanner VersionSource = "banner"
	// VersionFromOptions: the caller said it (Options.VersionOf or
	// Options.AssumeVersion; `crashsig --version-of`, `--assume-version`).
	VersionFromOptions VersionSource = "option"
)

// Result is the whole answer for one incident: the parsed crash (every
// field of symbolize.Crash at the top level), its signature, its
// classification, what symbolization did, and for thread dumps and cores
// the threads grouped by stack. It is exactly one line of
// `crashsig classify --json` and `crashsig core --json`; result.schema.json
// is its JSON Schema.
type Result struct {
	// SchemaVersion is SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	*symbolize.Crash
	// VersionSource says where Crash.Version came from.
	VersionSource VersionSource `json:"version_source,omitempty"`
	// Input is the kind of input the incident came from: "text" or "core".
	Input ContentKind `json:"input"`
	// Signature is the crash key and the trace of how it was made.
	Signature *signature.Signature `json:"signature"`
	// Classification is the catalog's answer: path, area, known defect,
	// status, advice and evidence.
	Classification *catalog.Verdict `json:"classification"`
	// Symbolization says what symbolizing the text's raw PCs did; nil when
	// no binary was given or the input was a core (unwound and symbolized
	// by the core reader).
	Symbolization *symbolize.FramesReport `json:"symbolization,omitempty"`
	// ThreadGroups groups the threads of thread dumps, gdb dumps and cores
	// by normalized stack, largest first (the crashing thread's group first).
	ThreadGroups []signature.Group `json:"thread_groups,omitempty"`
	// Warnings are observations about the inputs of this incident that do
	// not change it: a core's module whose build-id differs from the
	// binary given, for example.
	Warnings []string `json:"warnings,omitempty"`
}

// Location returns where the incident was seen.
func (r *Result) Location() signature.Seen {
	return signature.Seen{Source: r.Source, Line: r.StartLine}
}

// NewEncoder returns a JSON encoder that writes each Result or Bucket
// given to Encode as one line, byte for byte as `crashsig classify --json`
// (and `core --json`, `buckets --json`) prints it: HTML characters (<, >,
// &) are not escaped, so a frame such as std::vector<int>::at reads as
// written (json.Marshal and a default json.Encoder write \u003c). Do not
// call SetIndent or SetEscapeHTML on it if the lines must match the CLI's.
func NewEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
