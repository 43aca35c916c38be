import { transportSuite } from './transport-suite.js'

transportSuite('uws')
