package itanium_test

import (
	"fmt"

	"github.com/crashsig/crashsig/symbolize/internal/itanium"
	"github.com/ianlancetaylor/demangle"
)

func ExampleDemangle() {
	for _, name := range []string{
		"_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_EEDpOT_",
		"_ZZN5doris11stream_load11NodeChannel9open_waitEvENKUlbE_clEb.cold",
		"_ZN3foo3barIiEEvT_X", // malformed: use the reference, which rejects it too
	} {
		s, ok := itanium.Demangle(name)
		if !ok {
			s, _ = demangle.ToString(name, demangle.MaxLength(16))
		}
		fmt.Printf("%v %q\n", ok, s)
	}
	// Output:
	// true "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)"
	// true "doris::stream_load::NodeChannel::open_wait()::{lambda(bool)#1}::operator()(bool) const [clone .cold]"
	// false ""
}
