package main

import (
	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/symbolize"
)

// setFetcher makes the library fetch cores' modules and debug files by
// build-id through f.
func setFetcher(opts *pipeline.Options, f symbolize.DebugFetcher) {
	// TODO: pipeline.Options has no Fetcher yet.
	_ = f
}
