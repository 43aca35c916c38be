import { LocalRateLimitStore } from '../../core/index.js'
import { describeRateLimitStoreContract } from '../contracts/rate-limit-store.contract.js'

describeRateLimitStoreContract({
  name: 'local',
  create: async () => new LocalRateLimitStore(),
  destroy: async () => {},
})
