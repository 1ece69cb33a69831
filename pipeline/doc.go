// Package pipeline is the one call from input to answer: it opens inputs
// (files, directories, standard input, compressed files, ELF cores), finds
// every crash incident in them, symbolizes raw PCs, signs, classifies, and
// yields one Result per incident — the object `crashsig classify --json`
// prints.
//
//	p, err := pipeline.New(ctx, pipeline.Options{AssumeVersion: "3.3.9"})
//	if err != nil { … }
//	defer p.Close()
//	for res, err := range p.Run(ctx, os.Stdin, "be.out", "cores/") {
//		if err != nil { … } // *InputError, *SkipError (errors.Is(err, ErrSkipped)), or ctx.Err()
//		fmt.Println(res.Classification.Advice, res.Signature.Key)
//	}
//
// It sits on top of the other packages; dependencies point one way:
// symbolize ← signature ← catalog ← pipeline. Each stage can still be used
// alone.
//
// # Inputs
//
// Files expands paths (directories recursively, lexical order, hidden
// entries, non-log extensions and, in a walk, FIFOs, sockets and devices
// skipped). OpenFile and NewInput identify content by its bytes: gzip,
// zstd, xz and bzip2 are decompressed transparently, and text that starts
// with a UTF-16 byte order mark (PowerShell's `>`) is transcoded to UTF-8;
// an ELF core (ET_CORE) is read with symbolize.NewCore (a compressed one
// is first copied to a temporary file, since the core reader needs random
// access); other ELF files, archives and binary junk are refused with a
// *SkipError whose Reason says which. Errors name the input once. A FIFO
// named as a path is read until its writer closes it, and waits for a
// writer or input only until the context is done. A file that shrinks
// while it is read (truncated under the reader) ends with an *InputError
// after its Results, which may be incomplete.
//
// # Versions
//
// Cores and Doris dumps do not print the version that crashed, and the
// catalog's status needs it. A version printed by the incident wins; else
// the startup banner earlier in the same input (the same process
// lifetime: the ` version …` line the backend logs when it starts); else
// Options.VersionOf (per file or directory) or Options.AssumeVersion.
// Result.VersionSource says which, and the classification's evidence
// starts with a line saying so when the version did not come from the
// incident.
//
// # Results and buckets
//
// Result embeds the symbolize.Crash and adds the signature, the
// classification, the symbolization report and thread groups. Bucketer
// groups Results by path, signature key and defect into Buckets with
// counts, versions, first and last seen, sources and a representative.
// Both encode to the JSON described by result.schema.json (SchemaVersion);
// NewEncoder writes them one per line, byte for byte as the CLI's --json
// output (json.Marshal escapes <, > and &, which the CLI does not).
//
// A Pipeline is safe for concurrent use; Run, File, Reader and Text can be
// called from several goroutines. File, Reader and Text iterate one input;
// Run reads up to Options.Jobs inputs at once and still yields the Results
// in input order (the same sequence as with one job). With Jobs > 1 a file
// on disk of Options.ChunkScanBytes or more (256 MiB by default) is also
// scanned in chunks by Jobs goroutines (symbolize.ScanParallel), with the
// same Results.
package pipeline
