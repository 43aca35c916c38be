import { transportSuite } from './transport-suite.js'

transportSuite('node')
