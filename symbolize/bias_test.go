package symbolize

import "testing"

func TestMangledNeedle(t *testing.T) {
	for key, want := range map[string]string{
		"starrocks::ChunkSource::buffer_next_batch_chunks_blocking": "33buffer_next_batch_chunks_blocking",
		"doris::segment_v2::SegmentIterator::_read_columns<int>":    "13_read_columns",
		"starrocks::lake::TabletWriter::~TabletWriter":              "12TabletWriter",
		"starrocks::lake::TabletWriter::TabletWriter":               "12TabletWriter",
		"std::function<int (int)>::operator()":                      "8function",
		"starrocks::(anonymous namespace)::anon_worker":             "11anon_worker",
		"main":         "4main",
		"operator new": "",
	} {
		if got := mangledNeedle(key); got != want {
			t.Errorf("mangledNeedle(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestSymbolsNamed(t *testing.T) {
	b := openCxx(t, "o2-fp-dw5", BinaryOptions{})
	cache := map[string][]int{}
	for name, want := range map[string]string{
		"starrocks::ChunkSource::buffer_next_batch_chunks_blocking()":     "_ZN9starrocks11ChunkSource33buffer_next_batch_chunks_blockingEm",
		"_ZN9starrocks11ChunkSource33buffer_next_batch_chunks_blockingEm": "_ZN9starrocks11ChunkSource33buffer_next_batch_chunks_blockingEm",
		"starrocks::process_batch(int const*, int, int)":                  "_ZN9starrocks13process_batchEPKiii",
		"main": "main",
	} {
		got := b.symbolsNamed(name, cache)
		found := false
		for _, i := range got {
			found = found || b.syms.NameAt(i) == want
		}
		if !found {
			t.Errorf("symbolsNamed(%q) has no %s (got %d symbols)", name, want, len(got))
		}
	}
}
