// Every docstring @example of this package and its README Usage block run as tests (CONTRIBUTING.md).
import { describeDocExamples } from "../../../test-support/docExamples.js"

describeDocExamples(new URL("../", import.meta.url))
